// shelfd's one script: keys, live updates and upload on top of pages that work without it.
