(function_declaration name: (identifier) @name) @definition.function
(function_declaration
  name: (dot_index_expression table: (_) @container field: (identifier) @name)) @definition.function
(function_declaration
  name: (method_index_expression table: (_) @container method: (identifier) @name)) @definition.method
(assignment_statement
  (variable_list name: (dot_index_expression table: (_) @container field: (identifier) @name))
  (expression_list value: (function_definition))) @definition.function
(assignment_statement
  (variable_list name: (identifier) @name)
  (expression_list value: (function_definition))) @definition.function
(field name: (identifier) @name value: (function_definition)) @definition.function
