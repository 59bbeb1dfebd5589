(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration
  (modifiers (class_modifier) @_modifier)
  name: (identifier) @name
  (#eq? @_modifier "enum")) @definition.enum
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(type_alias type: (identifier) @name) @definition.type
(source_file (property_declaration (variable_declaration (identifier) @name)) @definition.constant)
