(function_definition name: (word) @name) @definition.function
