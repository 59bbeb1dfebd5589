(data_type name: (_) @name) @definition.type
(newtype name: (_) @name) @definition.type
(type_synonym name: (_) @name) @definition.type
(type_family name: (_) @name) @definition.type
(class name: (_) @name) @definition.interface
(declarations (signature name: (_) @name) @definition.function)
(declarations (function name: (_) @name) @definition.function)
(declarations (bind name: (_) @name) @definition.function)
(class_declarations (signature name: (_) @name) @definition.method)

; Imports.
(import module: (module) @import)
