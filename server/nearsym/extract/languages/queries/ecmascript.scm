; Definitions shared by JavaScript and TypeScript (both grammars have these
; nodes). Top-level `const`/`let`/`var` bindings are constants or variables,
; or functions when bound to a function.

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(class_declaration
  name: (_) @name) @definition.class

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(program
  [(lexical_declaration (variable_declarator
     name: (identifier) @name
     value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)
   (variable_declaration (variable_declarator
     name: (identifier) @name
     value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)])

(program
  (export_statement
    declaration: (lexical_declaration (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)))

(program
  (lexical_declaration
    "const"
    (variable_declarator
      name: (identifier) @name) @definition.constant))

(program
  (export_statement
    declaration: (lexical_declaration
      "const"
      (variable_declarator
        name: (identifier) @name) @definition.constant)))

(program
  (lexical_declaration
    "let"
    (variable_declarator
      name: (identifier) @name) @definition.variable))

(program
  (variable_declaration
    (variable_declarator
      name: (identifier) @name) @definition.variable))

; `exports.f = function () {}`, `Foo.prototype.bar = () => {}`
(program
  (expression_statement
    (assignment_expression
      left: (member_expression
        property: (property_identifier) @name)
      right: [(arrow_function) (function_expression)]) @definition.function))
