; OCaml: let-bound values and functions (a function when it takes
; parameters), types, variant constructors, record fields, exceptions,
; modules and module types, classes and methods. Modules are containers.

(value_definition (let_binding pattern: (value_name) @name (parameter)) @definition.function)
(value_definition (let_binding pattern: (value_name) @name) @definition.variable)
(type_binding name: (type_constructor) @name) @definition.type
(exception_definition (constructor_declaration (constructor_name) @name)) @definition.class
(constructor_declaration (constructor_name) @name) @definition.enum_member
(field_declaration (field_name) @name) @definition.field
(module_binding (module_name) @name) @definition.module
(module_type_definition (module_type_name) @name) @definition.interface
(value_specification (value_name) @name) @definition.function
(external (value_name) @name) @definition.function
(class_binding (class_name) @name) @definition.class
(method_definition (method_name) @name) @definition.method
