(function_declaration name: (_) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @container
        (pointer_type (type_identifier) @container)
        (generic_type type: (type_identifier) @container)
        (pointer_type (generic_type type: (type_identifier) @container))
      ]))
  name: (_) @name) @definition.method

(type_declaration (type_spec name: (_) @name type: (struct_type))) @definition.struct
(type_declaration (type_spec name: (_) @name type: (interface_type))) @definition.interface
(method_elem name: (_) @name) @definition.method
(type_declaration (type_spec name: (_) @name)) @definition.type
(type_declaration (type_alias name: (_) @name)) @definition.type
(const_spec name: (_) @name) @definition.constant
(source_file (var_declaration (var_spec name: (_) @name) @definition.constant))

; Imports.
(import_spec path: (_) @import)
