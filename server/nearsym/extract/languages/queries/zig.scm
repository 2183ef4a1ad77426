; Zig: functions, and `const`/`var` declarations (a struct, enum or union
; bound to a name is that type; its fields and functions belong to it).

(function_declaration name: (identifier) @name) @definition.function
(variable_declaration (identifier) @name (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name (union_declaration)) @definition.struct
(variable_declaration (identifier) @name (opaque_declaration)) @definition.struct
(source_file (variable_declaration "const" (identifier) @name) @definition.constant)
(source_file (variable_declaration "var" (identifier) @name) @definition.variable)
(enum_declaration (container_field name: (identifier) @name) @definition.enum_member)
(container_field name: (identifier) @name) @definition.field
(test_declaration (string (string_content) @name)) @definition.function
