; Swift: classes, structs, enums, protocols, extensions (a container for
; their members, not a symbol), functions, initializers, properties.

(class_declaration "extension" (user_type (type_identifier) @container.name)) @container
(class_declaration "struct" name: (type_identifier) @name) @definition.struct
(class_declaration "enum" name: (type_identifier) @name) @definition.enum
(class_declaration "actor" name: (type_identifier) @name) @definition.class
(class_declaration "class" name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration "init" @name) @definition.constructor
(enum_entry name: (simple_identifier) @name) @definition.enum_member
(typealias_declaration name: (type_identifier) @name) @definition.type
(property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @definition.property
(protocol_property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @definition.property
