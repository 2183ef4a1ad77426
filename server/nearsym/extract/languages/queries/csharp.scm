; C#: namespaces (their path is the container), types, members.

(namespace_declaration name: (_) @name) @definition.namespace
(file_scoped_namespace_declaration name: (_) @name) @definition.namespace
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(enum_member_declaration name: (identifier) @name) @definition.enum_member
(delegate_declaration name: (identifier) @name) @definition.function
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(destructor_declaration name: (identifier) @name) @definition.method
(property_declaration name: (identifier) @name) @definition.property
(indexer_declaration "this" @name) @definition.property
(event_declaration name: (identifier) @name) @definition.event
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.event
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(local_function_statement name: (identifier) @name) @definition.function
(operator_declaration operator: _ @name) @definition.operator
(conversion_operator_declaration type: (_) @name) @definition.operator
