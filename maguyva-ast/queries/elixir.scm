(call
  target: (identifier) @_keyword
  (arguments . (_) @name)
  (#any-of? @_keyword "defmodule" "defprotocol")) @definition.module

(call
  target: (identifier) @_keyword
  (arguments . (_) @name)
  (#any-of? @_keyword "defmacro" "defmacrop" "defguard" "defguardp")) @definition.macro

(call
  target: (identifier) @_keyword
  (arguments . (_) @name)
  (#any-of? @_keyword "def" "defp" "defdelegate" "defn" "defnp")) @definition.function

(call
  target: (identifier) @_keyword
  (arguments . (_) @name)
  (#eq? @_keyword "defimpl")) @scope

; Imports.
(call
  target: (identifier) @_keyword
  (arguments . (alias) @import)
  (#any-of? @_keyword "alias" "import" "use" "require"))
