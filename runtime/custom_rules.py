"""Namespace for user-registered functions and custom rules (transpile.defrule, custom_vjp,
custom_jvp). Generated code calls them as `rt.custom_rules.<name>(...)`; the entries are set
when the rule is registered."""
