(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.module
(trait_definition name: (identifier) @name) @definition.trait
(enum_definition name: (identifier) @name) @definition.enum
(function_definition name: [(identifier) (operator_identifier)] @name) @definition.function
(function_declaration name: [(identifier) (operator_identifier)] @name) @definition.function
(type_definition name: (type_identifier) @name) @definition.type
(given_definition name: (identifier) @name) @definition.constant
(compilation_unit (val_definition pattern: (identifier) @name) @definition.constant)
(template_body (val_definition pattern: (identifier) @name) @definition.constant)
