(variable_declaration (identifier) @name (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name (union_declaration)) @definition.struct
(variable_declaration (identifier) @name (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name (opaque_declaration)) @definition.type
(function_declaration name: (_) @name) @definition.function
(source_file (variable_declaration (identifier) @name) @definition.constant)

; Imports.
(builtin_function
  (builtin_identifier) @_builtin
  (arguments . (string (string_content) @import.relative))
  (#eq? @_builtin "@import"))
