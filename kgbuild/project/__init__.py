"""The build: a project's settings, and the pipeline discover -> extract -> store -> validate -> write."""
