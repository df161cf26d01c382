"""Reading: abstract files into `Paper` records, cleaned text, acronym definitions, paper labels."""
