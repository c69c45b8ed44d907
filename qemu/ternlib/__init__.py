"""Host-side tools for running Tern nodes under QEMU."""
