(class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(function_declaration name: (_) @name) @definition.function
(generator_function_declaration name: (_) @name) @definition.function
(method_definition name: (_) @name) @definition.method

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(expression_statement
  (assignment_expression
    left: (member_expression property: (_) @name)
    right: [(arrow_function) (function_expression)])) @definition.function
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)
(program (variable_declaration (variable_declarator name: (identifier) @name)) @definition.constant)
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)

; Each specifier of `export { a, b as c } from "m"` (only those of a statement
; with a source count; see the README). A pattern over the whole statement
; would keep a match state per specifier, quadratic in a long list.
(export_specifier name: (_) @name !alias) @definition.reexport
(export_specifier alias: (_) @name) @definition.reexport

; Imports.
(import_statement source: (string (string_fragment) @import))
(export_statement source: (string (string_fragment) @import))
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import))
  (#eq? @_require "require"))
