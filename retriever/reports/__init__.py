"""Reports: the `Report` record, section parsing, the importers (sources/), ingestion and the train/dev/test split."""
