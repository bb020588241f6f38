"""MewCode over the Agent Client Protocol."""
