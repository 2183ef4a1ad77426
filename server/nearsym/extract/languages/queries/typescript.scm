; TypeScript (and TSX) additions to ecmascript.scm.

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.enum

(enum_body
  [(property_identifier) @name @definition.enum_member
   (enum_assignment name: (property_identifier) @name) @definition.enum_member])

(internal_module
  name: [(identifier) (nested_identifier)] @name) @definition.namespace

(module
  name: [(identifier) (nested_identifier) (string)] @name) @definition.module

(function_signature
  name: (identifier) @name) @definition.function

(method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(abstract_method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(property_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.property

(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.field

(construct_signature "new" @name) @definition.constructor
