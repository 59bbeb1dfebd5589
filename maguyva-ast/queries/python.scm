(class_definition
  name: (_) @name
  body: (block . (expression_statement (string) @doc))?) @definition.class

(function_definition
  name: (_) @name
  body: (block . (expression_statement (string) @doc))?) @definition.function

(module
  (expression_statement
    (assignment left: (identifier) @name) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; Imports.
(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import))
(import_from_statement module_name: (_) @import name: (dotted_name) @import.name)
(import_from_statement module_name: (_) @import name: (aliased_import name: (dotted_name) @import.name))
(import_from_statement module_name: (_) @import (wildcard_import))
