(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
(module name: (_) @name) @definition.module
(function_declaration name: (_) @name) @definition.function
(generator_function_declaration name: (_) @name) @definition.function
(function_signature name: (_) @name) @definition.function
(method_definition name: (_) @name) @definition.method
(method_signature name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)
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
