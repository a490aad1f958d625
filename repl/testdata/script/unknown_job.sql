SHOW JOBS;
STOP JOB 'ffffffff';
