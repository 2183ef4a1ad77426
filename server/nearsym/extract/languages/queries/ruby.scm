; Ruby: modules, classes, methods (instance and singleton), constants,
; attribute accessors.

(module name: [(constant) (scope_resolution)] @name) @definition.module
(class name: [(constant) (scope_resolution)] @name) @definition.class
(singleton_class value: (_) @name) @definition.class
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(alias name: (_) @name) @definition.method
(assignment left: (constant) @name) @definition.constant
(call
  method: (identifier) @_attr
  arguments: (argument_list (simple_symbol) @name)
  (#text-match? @_attr "^attr_(reader|writer|accessor)$")) @definition.property
