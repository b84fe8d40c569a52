"""Agents for spider-env."""
