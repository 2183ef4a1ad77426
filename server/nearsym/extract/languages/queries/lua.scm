; Lua: functions (global, local, and fields of a table, whose table is the
; container), and top-level assignments.

(function_declaration name: (identifier) @name) @definition.function
(function_declaration name: (dot_index_expression table: (_) @scope field: (identifier) @name)) @definition.function
(function_declaration name: (method_index_expression table: (_) @scope method: (identifier) @name)) @definition.method
(chunk (assignment_statement (variable_list name: (dot_index_expression table: (_) @scope field: (identifier) @name)) (expression_list value: (function_definition))) @definition.function)
(chunk (variable_declaration (assignment_statement (variable_list name: (identifier) @name))) @definition.variable)
(chunk (assignment_statement (variable_list name: (identifier) @name)) @definition.variable)
(field name: (identifier) @name value: (function_definition)) @definition.function
(chunk (assignment_statement (variable_list name: (bracket_index_expression table: (_) @scope field: (string) @name)) (expression_list value: (function_definition))) @definition.function)
