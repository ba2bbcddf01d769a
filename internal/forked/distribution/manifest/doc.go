package manifest
