"""The ladder domain: model, table forming, the store and its Redis implementation, match log, ratings, jobs."""
