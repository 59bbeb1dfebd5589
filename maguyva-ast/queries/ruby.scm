(class name: (_) @name) @definition.class
(module name: (_) @name) @definition.module
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function
(assignment left: (constant) @name) @definition.constant

; Imports.
(call
  method: (identifier) @_method
  arguments: (argument_list . (string (string_content) @import.relative))
  (#eq? @_method "require_relative"))
(call
  method: (identifier) @_method
  arguments: (argument_list . (string (string_content) @import))
  (#any-of? @_method "require" "load"))
