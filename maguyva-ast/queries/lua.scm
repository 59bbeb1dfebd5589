(function_declaration name: (identifier) @name) @definition.function
(function_declaration
  name: (dot_index_expression table: (_) @container field: (_) @name)) @definition.function
(function_declaration
  name: (method_index_expression table: (_) @container method: (_) @name)) @definition.method
(assignment_statement
  (variable_list name: (dot_index_expression table: (_) @container field: (_) @name))
  (expression_list value: (function_definition))) @definition.function
(assignment_statement
  (variable_list name: (identifier) @name)
  (expression_list value: (function_definition))) @definition.function
(field name: (_) @name value: (function_definition)) @definition.function

; Imports.
(function_call
  name: (identifier) @_require
  arguments: (arguments . (string content: (_) @import))
  (#eq? @_require "require"))
