(class_declaration name: (_) @name) @definition.class
(record_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(annotation_type_declaration name: (_) @name) @definition.interface
(enum_declaration name: (_) @name) @definition.enum
(method_declaration name: (_) @name) @definition.method
(constructor_declaration name: (_) @name) @definition.method

(field_declaration
  declarator: (variable_declarator name: (_) @name)
  (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant

; Imports.
(import_declaration (_) @import)
