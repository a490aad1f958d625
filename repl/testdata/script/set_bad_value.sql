SET 'execution.checkpointing.interval' = '5 parsecs';
