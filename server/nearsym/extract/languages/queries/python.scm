; Python definitions. Methods are functions whose nearest container is a
; class (extraction decides that); class-level assignments are fields;
; module-level assignments are variables (constants when ALL_CAPS).
; Imports and re-exports are not definitions.

; `name = lambda ...:` anywhere is a function by another spelling (local ones
; are marked local by extraction).
(assignment
  left: (identifier) @name
  right: (lambda)) @definition.function

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.variable))

(module
  (expression_statement
    (assignment
      left: (pattern_list (identifier) @name)) @definition.variable))

; `if TYPE_CHECKING:` / `try:` blocks at module level define names too.
(module
  (if_statement
    consequence: (block
      (expression_statement
        (assignment
          left: (identifier) @name) @definition.variable))))

(module
  (try_statement
    body: (block
      (expression_statement
        (assignment
          left: (identifier) @name) @definition.variable))))

(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name) @definition.field)))
