; Julia: modules, functions (long and short form), macros, structs and
; abstract types, constants.

(module_definition name: (identifier) @name) @definition.module
(function_definition (signature (call_expression . (identifier) @name))) @definition.function
(function_definition (signature (typed_expression (call_expression . (identifier) @name)))) @definition.function
(function_definition (signature (where_expression (call_expression . (identifier) @name)))) @definition.function
(assignment . (call_expression . (identifier) @name) (operator) @_op (#text-eq? @_op "=")) @definition.function
(macro_definition (signature (call_expression . (identifier) @name))) @definition.macro
(struct_definition (type_head (identifier) @name)) @definition.struct
(struct_definition (type_head (binary_expression . (identifier) @name))) @definition.struct
(struct_definition (type_head (parametrized_type_expression . (identifier) @name))) @definition.struct
(struct_definition (typed_expression . (identifier) @name) @definition.field)
(abstract_definition (type_head (identifier) @name)) @definition.interface
(abstract_definition (type_head (binary_expression . (identifier) @name))) @definition.interface
(const_statement (assignment . (identifier) @name)) @definition.constant
