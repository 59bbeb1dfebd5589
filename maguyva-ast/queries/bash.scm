(function_definition name: (_) @name) @definition.function

; Imports.
(command
  name: (command_name (word) @_command)
  argument: (_) @import.relative
  (#any-of? @_command "source" "."))
