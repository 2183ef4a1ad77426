; Elixir: modules and protocols (a dotted alias is split into container and
; name), functions, macros, guards, structs' module attributes.

(call
  target: (identifier) @_kw
  (arguments (alias) @name)
  (#text-any-of? @_kw "defmodule" "defprotocol" "defimpl")) @definition.module

(call
  target: (identifier) @_kw
  (arguments
    [(call target: (identifier) @name)
     (identifier) @name
     (binary_operator left: (call target: (identifier) @name))])
  (#text-any-of? @_kw "def" "defp" "defdelegate" "defguard" "defguardp" "defn" "defnp")) @definition.function

(call
  target: (identifier) @_kw
  (arguments
    [(call target: (identifier) @name)
     (identifier) @name
     (binary_operator left: (call target: (identifier) @name))])
  (#text-any-of? @_kw "defmacro" "defmacrop")) @definition.macro

(unary_operator
  operator: "@"
  operand: (call target: (identifier) @name
    (arguments))) @definition.constant
