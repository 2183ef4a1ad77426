; C++ additions to c.scm: namespaces, classes, methods (in the class body and
; defined out of line as `ns::Class::method`, whose qualified name the
; extraction splits), constructors, destructors, operators, templates,
; aliases.

(namespace_definition name: (namespace_identifier) @name) @definition.namespace
(namespace_definition name: (nested_namespace_specifier) @name) @definition.namespace
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(class_specifier name: (template_type name: (type_identifier) @name) body: (field_declaration_list)) @definition.class
(struct_specifier name: (template_type name: (type_identifier) @name) body: (field_declaration_list)) @definition.struct
(alias_declaration name: (type_identifier) @name) @definition.type
(function_definition declarator: (function_declarator declarator: [(qualified_identifier) (field_identifier) (destructor_name) (operator_name)] @name)) @definition.function
(function_definition declarator: (reference_declarator (function_declarator declarator: [(identifier) (qualified_identifier) (field_identifier) (operator_name)] @name))) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: [(qualified_identifier) (field_identifier)] @name))) @definition.function
(field_declaration declarator: (function_declarator declarator: [(field_identifier) (operator_name) (destructor_name)] @name)) @definition.method
(field_declaration_list (declaration declarator: (function_declarator declarator: [(identifier) (destructor_name) (operator_name)] @name)) @definition.method)
(field_declaration_list (declaration declarator: (function_declarator declarator: (destructor_name) @name)) @definition.method)
(declaration_list (declaration declarator: (function_declarator declarator: (identifier) @name)) @definition.function)
(declaration_list (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)
