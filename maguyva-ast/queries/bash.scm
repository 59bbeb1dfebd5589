(function_definition name: (_) @name) @definition.function
