(class_declaration "interface" name: (_) @name) @definition.interface
(class_declaration
  (modifiers (class_modifier) @_modifier)
  name: (_) @name
  (#eq? @_modifier "enum")) @definition.enum
(class_declaration name: (_) @name) @definition.class
(object_declaration name: (_) @name) @definition.class
(function_declaration name: (_) @name) @definition.function
(type_alias type: (_) @name) @definition.type
(source_file (property_declaration (variable_declaration (identifier) @name)) @definition.constant)

; Imports.
(import (qualified_identifier) @import)
