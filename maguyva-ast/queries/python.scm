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
