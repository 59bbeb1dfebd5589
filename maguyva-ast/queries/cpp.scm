(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(class_specifier name: (template_type name: (type_identifier) @name) body: (field_declaration_list)) @definition.class
(class_specifier name: (qualified_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(struct_specifier name: (template_type name: (type_identifier) @name) body: (field_declaration_list)) @definition.struct
(struct_specifier name: (qualified_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(namespace_definition name: (namespace_identifier) @name) @definition.module
(namespace_definition name: (nested_namespace_specifier) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type
(type_definition declarator: (type_identifier) @name) @definition.type
(concept_definition name: (identifier) @name) @definition.interface

(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier) (destructor_name) (operator_name)] @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function

(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
