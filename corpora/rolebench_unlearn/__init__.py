"""RoleBench-Unlearn: role-playing unlearning splits built on RoleBench."""
