; Kotlin: classes (interfaces and enums told apart), objects, functions,
; properties, enum entries, type aliases, secondary constructors.

(class_declaration "interface" name: (identifier) @name) @definition.interface
; An enum is `enum class`: the grammar reads a class body on one line,
; `class Tag { fun f() {} }`, as an enum's body holding an error.
(class_declaration (modifiers (class_modifier "enum")) name: (identifier) @name (enum_class_body)) @definition.enum
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(companion_object name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(property_declaration (variable_declaration (identifier) @name)) @definition.property
(enum_entry (identifier) @name) @definition.enum_member
(type_alias type: (identifier) @name) @definition.type
(class_parameter "val" (identifier) @name) @definition.property
(class_parameter "var" (identifier) @name) @definition.property
