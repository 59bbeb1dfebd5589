(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name) @definition.module
(alias_declaration name: (_) @name) @definition.type
(type_definition declarator: (type_identifier) @name) @definition.type
(concept_definition name: (_) @name) @definition.interface

; `f()`, `*f()` or `&f()`: the extractor finds the name in the declarator.
(function_definition declarator: (_) @declarator) @definition.function

(preproc_def name: (_) @name) @definition.macro
(preproc_function_def name: (_) @name) @definition.macro

; Imports.
(preproc_include path: (_) @import)
