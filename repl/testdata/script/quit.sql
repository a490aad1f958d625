SHOW TABLES;
QUIT;
SELECT nothing FROM nowhere;
