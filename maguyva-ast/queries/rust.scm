(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant

(impl_item type: (type_identifier) @name) @scope
(impl_item type: (generic_type type: (type_identifier) @name)) @scope
(impl_item type: (scoped_type_identifier name: (type_identifier) @name)) @scope
(impl_item type: (generic_type type: (scoped_type_identifier name: (type_identifier) @name))) @scope

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
