(class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(trait_declaration name: (_) @name) @definition.trait
(enum_declaration name: (_) @name) @definition.enum
(function_definition name: (_) @name) @definition.function
(method_declaration name: (_) @name) @definition.method
(namespace_definition name: (_) @name body: (compound_statement)) @definition.module
(const_declaration (const_element (name) @name)) @definition.constant

; Imports.
(namespace_use_clause [(qualified_name) (name)] @import)
([(require_expression) (require_once_expression) (include_expression) (include_once_expression)]
  [(string (string_content) @import.relative) (encapsed_string (string_content) @import.relative)])
