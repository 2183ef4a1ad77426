; Haskell: the module, functions and values (by their binding, not their
; type signature), data types and their constructors and record fields,
; newtypes, type synonyms, type classes and their methods.

(header module: (module) @name) @definition.module
(declarations (function name: (variable) @name) @definition.function)
(declarations (bind name: (variable) @name) @definition.function)
(data_type name: (name) @name) @definition.struct
(newtype name: (name) @name) @definition.struct
(type_synonym name: (name) @name) @definition.type
(type_family name: (name) @name) @definition.type
(class name: (name) @name) @definition.interface
(class_declarations (signature name: (variable) @name) @definition.method)
(data_constructor constructor: (prefix name: (constructor) @name)) @definition.enum_member
(data_constructor constructor: (record name: (constructor) @name)) @definition.constructor
(newtype_constructor name: (constructor) @name) @definition.constructor
(field name: (field_name (variable) @name)) @definition.field
