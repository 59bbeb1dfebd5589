(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name) @definition.module
(alias_declaration name: (_) @name) @definition.type
(type_definition declarator: (type_identifier) @name) @definition.type
(concept_definition name: (_) @name) @definition.interface

(function_definition
  declarator: (function_declarator declarator: (_) @name)) @definition.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name))) @definition.function
(function_definition
  declarator: (reference_declarator (function_declarator declarator: (_) @name))) @definition.function

(preproc_def name: (_) @name) @definition.macro
(preproc_function_def name: (_) @name) @definition.macro

; Imports.
(preproc_include path: (_) @import)
