(class_declaration name: (_) @name) @definition.class
(record_declaration name: (_) @name) @definition.class
(struct_declaration name: (_) @name) @definition.struct
(interface_declaration name: (_) @name) @definition.interface
(enum_declaration name: (_) @name) @definition.enum
(delegate_declaration name: (_) @name) @definition.type
(method_declaration name: (_) @name) @definition.method
(constructor_declaration name: (_) @name) @definition.method
(property_declaration name: (_) @name) @definition.property
(namespace_declaration name: (_) @name) @definition.module
(file_scoped_namespace_declaration name: (_) @name) @definition.module

; Imports.
(using_directive (_) @import)
