(struct_item name: (_) @name) @definition.struct
(union_item name: (_) @name) @definition.struct
(enum_item name: (_) @name) @definition.enum
(trait_item name: (_) @name) @definition.trait
(type_item name: (_) @name) @definition.type
(function_item name: (_) @name) @definition.function
(function_signature_item name: (_) @name) @definition.function
(mod_item name: (_) @name body: (declaration_list)) @definition.module
(macro_definition name: (_) @name) @definition.macro
(const_item name: (_) @name) @definition.constant
(static_item name: (_) @name) @definition.constant

(impl_item type: (_) @name) @scope

(use_declaration (visibility_modifier)
  argument: (scoped_use_list list: (use_list (identifier) @name))) @definition.reexport
(use_declaration (visibility_modifier)
  argument: (scoped_use_list list: (use_list (scoped_identifier name: (identifier) @name)))) @definition.reexport
(use_declaration (visibility_modifier)
  argument: (scoped_use_list list: (use_list (use_as_clause alias: (identifier) @name)))) @definition.reexport
(use_declaration (visibility_modifier)
  argument: (scoped_identifier name: (identifier) @name)) @definition.reexport
(use_declaration (visibility_modifier)
  argument: (use_as_clause alias: (identifier) @name)) @definition.reexport

; Imports.
(use_declaration argument: (_) @import)
(mod_item name: (_) @import.module !body)
