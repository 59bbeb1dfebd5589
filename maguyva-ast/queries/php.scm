(class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(trait_declaration name: (_) @name) @definition.trait
(enum_declaration name: (_) @name) @definition.enum
(function_definition name: (_) @name) @definition.function
(method_declaration name: (_) @name) @definition.method
(namespace_definition name: (_) @name body: (compound_statement)) @definition.module
(const_declaration (const_element (name) @name)) @definition.constant
