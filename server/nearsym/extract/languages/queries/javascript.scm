; JavaScript-only nodes (TypeScript spells class fields differently).

(field_definition
  property: [(property_identifier) (private_property_identifier)] @name) @definition.field
