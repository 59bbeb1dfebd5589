(class_declaration declaration_kind: "struct" name: (_) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (_) @name) @definition.enum
(class_declaration declaration_kind: "extension" name: (_) @name) @scope
(class_declaration name: (_) @name) @definition.class
(protocol_declaration name: (_) @name) @definition.interface
(function_declaration name: _ @name) @definition.function
(protocol_function_declaration name: _ @name) @definition.method
(init_declaration name: "init" @name) @definition.method
(typealias_declaration name: (_) @name) @definition.type
(source_file (property_declaration name: (pattern bound_identifier: (_) @name)) @definition.constant)

; Imports.
(import_declaration (identifier) @import)
